from memplugins.models.rte_attention import RteAttention
from memplugins.models.lstmn_fusion import LstmnFusion
