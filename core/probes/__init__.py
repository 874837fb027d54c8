"""Looking inside trained models: does a classifier use the order of its tokens (core.probes.order), where
does it attend and by what offset (core.probes.attention), what position signal did it get (core.probes.position)."""
