"""Training features beyond AllenNLP's own: a wall-clock deadline that stops at a resumable checkpoint."""
from memplugins.training.deadline import DeadlineCallback  # noqa: F401
