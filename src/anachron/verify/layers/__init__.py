"""The verifier's three layers, in the order the pipeline tries them (docs/verification.md).

* :mod:`~anachron.verify.layers.grounded`: checks against point-in-time data (prices, index
  changes; :mod:`~anachron.verify.layers.edgar` for company figures,
  :mod:`~anachron.verify.layers.market` wires them for the market tasks; each task's own
  checks live in its package);
* :mod:`~anachron.verify.layers.rules`: date-plausibility rules (earliest realistic public date);
* :mod:`~anachron.verify.layers.llm`: the verifier model's date-plausibility judgement.

:mod:`anachron.verify.pipeline` applies them to claims.
"""
