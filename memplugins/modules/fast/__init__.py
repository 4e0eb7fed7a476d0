"""
Fast paths: each recurrence as one autograd Function with a hand-written backward, under one contract
(`contract.py`). Their literal references are in `memplugins.modules.reference`.
"""
