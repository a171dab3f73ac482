"""The pieces of the supervised methods (Self-Correction and TimeSPEC, :mod:`anachron.methods.supervised`).

* :mod:`~anachron.methods.supervision.prompts`: what the generator and the aggregator are shown:
  the avoid-list, the closed-world prompt and the aggregator's request (also used by Shapley-DCLR's
  value calls, :mod:`anachron.attribution.shapley`);
* :mod:`~anachron.methods.supervision.supervisors`: claim extraction and dating, the verdicts;
* :mod:`~anachron.methods.supervision.loop`: generate -> supervise -> regenerate -> resupervise ->
  aggregate.

The methods themselves (runners, call patterns, registration) live in
:mod:`anachron.methods.supervised`; this package registers nothing (docs/methods.md#supervised-methods).
"""
