# expect: none
# An id() memo the top-level call makes and hands down: it lives for one traversal.
def clone_tree(node, memo):
    if id(node) in memo:
        return memo[id(node)]
    copy = memo[id(node)] = type(node)()
    for child in getattr(node, "children", ()):
        clone_tree(child, memo)
    return copy


def clone(root):
    return clone_tree(root, {})
