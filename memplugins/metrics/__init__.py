from memplugins.metrics.ranking import MapMrr
