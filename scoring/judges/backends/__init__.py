"""Vision-language backends behind one interface (``base.VLMBackend``), and the CLIP zero-shot cue judge."""
