# task: add
# attack: right value, wrong type: float for int (1 + 2 == 3.0 in Python)
def add(x, y):
    return float(x + y)
