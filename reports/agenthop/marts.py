"""AgentHop's marts as its reports read them: the contract between models_sql/marts/agenthop and reports/."""

from __future__ import annotations

#: The contract marts (docs/metrics.md#marts) plus the extra marts the reports read.
CONTRACT_MARTS: tuple[str, ...] = (
    "fct_trajectory",
    "model_summary",
    "stopping_behavior",
    "wrong_read_actions",
    "tool_transitions",
    "tool_trigrams",
    "cell_accuracy",
    "reasoning_type_accuracy",
    "termination_summary",
    "evidence_contact_summary",
    "rerun_variance",
    "condition_deltas",
)
EXTRA_MARTS: tuple[str, ...] = ("fct_tool_call", "bigram_effects", "rerun_item_flips")

#: Columns the report queries read, per mart (the contract between models_sql/marts and reports/).
MART_COLUMNS: dict[str, tuple[str, ...]] = {
    "model_summary": ("run_id", "model", "condition", "replicate", "accuracy", "n_items"),
    "fct_trajectory": ("run_id", "sample_id", "question_type", "cell", "reasoning_type", "is_correct",
                       "paper_recall", "section_recall", "terminated_by", "total_tokens", "total_turns",
                       "budget_used"),
    "fct_tool_call": ("run_id", "sample_id", "seq", "turn", "tool", "args_json", "status", "cost"),
    "stopping_behavior": ("run_id", "scope", "category", "n", "share"),
    "wrong_read_actions": ("run_id", "action", "n", "share"),
    "termination_summary": ("run_id", "terminated_by", "n", "share"),
    "evidence_contact_summary": ("run_id", "evidence_contact", "n", "share", "conversion"),
    "tool_transitions": ("run_id", "prev_tool", "next_tool", "n", "p_next"),
    "tool_trigrams": ("run_id", "trigram", "n", "share"),
    "cell_accuracy": ("run_id", "cell", "n", "correct"),
    "reasoning_type_accuracy": ("run_id", "reasoning_type", "n", "correct"),
    "bigram_effects": ("run_id", "bigram", "n_with", "correct_with", "n_without", "correct_without",
                       "acc_with", "acc_without", "effect_pp"),
    "rerun_variance": ("model", "condition", "metric", "n_runs", "mean", "std", "range"),
    "rerun_item_flips": ("model", "condition", "sample_id", "n_runs", "n_correct"),
}


