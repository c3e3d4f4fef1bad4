"""Reward hacking as a measured quantity: receipts and re-grading of stored candidates (`regrade`),
hackability certificates for packs (`certify`, `strategies`) and impossible canary tasks mixed into
training batches (`canaries`)."""
