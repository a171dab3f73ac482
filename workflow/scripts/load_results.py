"""Glue for rule load_results: build results/results.duckdb (atomically), with the report views."""

from anachron.logs import log_to
from anachron.metrics.derived import derive_with
from anachron.report.registry import report_view_statements
from anachron.store.load import write_database

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    counts = write_database(
        sm.output.db,
        instances=list(sm.input.instances),
        run_meta=list(sm.input.meta),
        completions=list(sm.input.runs),
        llm_calls=[*sm.input.calls, *sm.input.verify_calls, *sm.input.shapley_calls, *sm.input.clean_calls],
        tool_calls=list(sm.input.tool_calls),
        claims=list(sm.input.claims),
        instance_scores=list(sm.input.scores),
        claim_shapley=list(sm.input.phi),
        shapley=list(sm.input.shapley),
        calibration=[sm.input.calibration],
        planted=[sm.input.planted],
        training_log=list(sm.input.training_log),
        clean_scores=list(sm.input.clean),
        probe_scores=list(sm.input.probes),
        derive=derive_with(dict(sm.params.bootstrap)),
        views=report_view_statements(),
        prices={name: tuple(price) for name, price in dict(sm.params.prices).items()},
    )
    log.info("wrote %s: %s", sm.output.db, counts)
