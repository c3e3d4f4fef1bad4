# task: add
# status: timeout
# attack: infinite loop
def add(x, y):
    while True:
        pass
