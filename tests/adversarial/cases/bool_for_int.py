# task: add
# attack: bool where an int is expected (True == 1)
def add(x, y):
    return True
