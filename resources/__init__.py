"""Icons, style sheet and the built-in demo reports' builder (:mod:`resources.demo`)."""
