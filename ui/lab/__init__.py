"""The Fault lab's Streamlit parts: its session keys (`keys`), the data section (`data`, own files in `files`),
the experiment's controls, job and progress (`experiment`), the results (`results`), inside the models
(`inside`) and studies (`study`). Decisions (waits, tables, commands, the file table) live in core.lab."""
