"""TEMPO training (DESIGN section 9): the optional ``train`` extra, the base weights and the adapter export.

Nothing here imports torch at package load; the modules that need the extra import it inside
their functions, after :func:`anachron.training.extra.require_training_extra` has checked it.
"""
