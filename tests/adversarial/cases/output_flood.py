# task: add
# status: output_limit crash
# attack: output flood: a huge result plus a flood on stdout
def add(x, y):
    print("x" * (1 << 24))
    return "y" * (64 << 20)
