"""``swemine run sft``: trajectories → SFT conversations selected as data (``sft/``) and critic targets
(``critic/``); the logic is :mod:`swemine.miners.training`.

The shared front reads and joins the trajectories (tasks as a side input, with their patches); the configured
filters run on the trajectories; the kept ones are paired with their task's patch from that side input. Every run
gets a critic row (stage ``critic``). Stage ``sft_select`` applies the per-run selection, ``sft_render`` renders
the style and the length limit, then the per-instance selection (``quality_group``: unique action sequences, the
N shortest; only the rows' candidates are grouped by instance) runs over each instance's rows, and the secrets
filter scans the rows once more (a native conversation is read from the log again; ``sft_recount`` counts the
characters and tokens of a row it scrubbed again). Every drop is a ``filtered/`` row with its stage and reason;
the manifest counts them per stage.
"""
from __future__ import annotations

import apache_beam as beam

from swemine.corpora.inputs import expand_inputs
from swemine.manifests.shards import read_rows
from swemine.miners.training.critic import CriticConfig
from swemine.miners.training.rows import (
    CRITIC_SCHEMA,
    SFT_SCHEMA,
    RenderConfig,
    critic_fn,
    recount_fn,
    render_fn,
    select_fn,
    sft_summary,
    without_steps,
)
from swemine.miners.training.select import SelectConfig
from swemine.pipelines.configs import SftJob
from swemine.pipelines.engine.runner import Built, PipelineSpec
from swemine.pipelines.engine.stage import apply_stage
from swemine.pipelines.outputs import CRITIC, FILTERED, SFT
from swemine.pipelines.steps.filtering import SelectPerInstance, apply_filters
from swemine.pipelines.steps.fronts import TASK_CONTEXT, read_trajectory_records, with_gold


def build_spec(job: SftJob) -> PipelineSpec:
    """The ``sft`` job (see the module docstring)."""
    config = job.resolve()
    select = SelectConfig(only_resolved=config.only_resolved, quality_rules=config.quality_rules,
                          max_rejected_calls=config.max_rejected_calls, require_patch=config.require_patch,
                          max_tokens=config.max_tokens, per_instance=config.per_instance)
    render = RenderConfig(style=config.style, inputs=tuple(config.inputs), tokenizer=config.tokenizer,
                          max_tokens=config.max_tokens)
    critic = CriticConfig(gamma=config.gamma, terminal_reward=config.terminal_reward)

    def build(p):
        joined, rejects, _, task_side = read_trajectory_records(p, job, task_fields=(*TASK_CONTEXT, "patch"))
        trajs, traj_filtered = apply_filters(joined, "trajectory", config.filters, label="Traj")
        items = with_gold(trajs, task_side)
        critic_rows, critic_rejects, _ = apply_stage(items, "critic", lambda: critic_fn(critic))
        chosen, select_rejects, select_filtered = apply_stage(items, "sft_select", lambda: select_fn(select))
        rendered, render_rejects, render_filtered = apply_stage(chosen, "sft_render", lambda: render_fn(render))
        kept, group_filtered = rendered | "SftQualityGroup" >> SelectPerInstance(select.quality(), "sft")
        scrubbed, row_filtered = apply_filters(kept | "DropSteps" >> beam.Map(without_steps), "sft",
                                               config.filters.secrets_only(), label="Sft")
        rows, recount_rejects, _ = apply_stage(scrubbed, "sft_recount", lambda: recount_fn(render))
        return Built(outputs={SFT: rows, CRITIC: critic_rows},
                     rejects=rejects + [critic_rejects, select_rejects, render_rejects, recount_rejects],
                     filtered=[traj_filtered, select_filtered, render_filtered, group_filtered, row_filtered])

    return PipelineSpec(name="sft", config=config, outputs={SFT: SFT_SCHEMA, CRITIC: CRITIC_SCHEMA}, build=build,
                        input_uris=[u.uri for u in expand_inputs(list(job.inputs)) if u.kind == "file"],
                        num_buckets=job.shards,
                        summarize=lambda output, stages: {"sft": sft_summary(
                            read_rows(output, SFT), read_rows(output, FILTERED), read_rows(output, CRITIC))})
