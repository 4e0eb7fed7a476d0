from memplugins.commands.attention_map import AttentionMap
from memplugins.commands.plot_metrics import PlotMetrics
