"""Reward hacking as a measured quantity: re-grading of stored candidates from their receipts
(`regrade`), hackability certificates for packs (`certify`, `strategies`) and their plots. The
trainer's side - canaries and the candidate store - lives in rlvr/trainer/ (canaries.py,
canary_tasks.py, candidates.py), since the trainer imports only core, envs and itself."""
