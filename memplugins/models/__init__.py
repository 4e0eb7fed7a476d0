from memplugins.models.rte_attention import RteAttention
