# task: add
# attack: int subclass whose __eq__ is always True and whose value is wrong
class Liar(int):
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0

    def __repr__(self):
        return "5"


def add(x, y):
    return Liar(0)
