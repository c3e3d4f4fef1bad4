# task: add
# attack: a self-referential / deeply nested result to crash the encoder or the decoder
def add(x, y):
    result = []
    result.append(result)
    nested = []
    for _ in range(10_000):
        nested = [nested]
    return result if x % 2 else nested
