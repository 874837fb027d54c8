"""Looking inside trained models: does a classifier use the order of its tokens (core.lab.probes.order), where
does it attend and by what offset (core.lab.probes.attention), what position signal did it get
(core.lab.probes.position)."""
