"""Every st.session_state key of the Fault lab that no widget owns, in one place: what the lab keeps across
reruns and page switches. A widget's own key is dropped when its page is left, so what must survive lives here.
Each module of ui/lab reads its keys from this one; a test or a benchmark reads them here too."""

DATA_KEY = "_fault_lab_data"  # the current data: a ui.lab.data.LoadedData (a fresh visit starts synthetic)
MESSAGE_KEY = "_fault_lab_message"  # the last outcome to show at the data section: ("error" | "success", markdown)
JOB_KEY = "_fault_lab_job"  # the running or queued job of this session: a core.lab.jobs.Job, absent when none
RESULTS_KEY = "_fault_lab_results"  # the last results JSON, trained here or opened from a file
WEIGHTS_KEY = "_fault_lab_weights"  # the trained weights of those results as torch.save bytes; None when opened
ONE_FOLD_KEY = "_fault_lab_one_fold"  # those results' runs as a one-fold study JSON (trained here); None when opened
OTHER_STUDIES_KEY = "_fault_lab_other_studies"  # the press's other one-fold studies by name ({} when opened): the
# other windowing's ("random") of a windowing comparison, each further train load's ("load1") of a cross-load
STUDY_KEY = "_fault_lab_study"  # a study JSON run on this page or opened from a file
OWNER_KEY = "_fault_lab_owner"  # this browser session's id, the owner of its jobs in core.lab.jobs
DIGESTS_KEY = "_upload_digests"  # uploader file id -> SHA-256 of the files now selected, so a rerun hashes none again
DEFAULT_MODELS_KEY = "_fault_lab_default_models"  # the default press's models, decided once a session
