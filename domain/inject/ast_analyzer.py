"""inject_prints' offline analyser: Python's own ast, run by the training host's interpreter.
Reads {"file": path, "line": n} or {"file": path, "function": "Class.method"} as JSON on
stdin and prints what to probe as JSON: the statement's span and indentation, the values it
reads (names and attribute chains that are not called) and writes (assignment targets),
or a function's parameters, first body line and return statements. It also lists what a code
model may choose from (the expressions the statement reads and writes, the source of each
returned expression) and the lines to show it (the enclosing function), so a model's answer
is checked against the code instead of trusted."""
import ast
import json
import sys


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


IMPORTED = set()  # names bound by imports in the file: modules and functions, not values


def reads(node):
    """Values loaded by `node`: names and attribute chains, minus what is called, plus the
    objects methods are called on (k in k.transpose(...)), minus imported modules."""
    called = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            name = dotted(n.func)
            if name:
                called.add(name)
    seen = []
    local = bound_inside(node)  # comprehension and lambda variables do not exist before the statement

    def add(name):
        if name and name not in seen and name not in called and name.split(".")[0] not in IMPORTED \
                and name.split(".")[0] not in local and name not in ("self", "cls"):
            seen.append(name)

    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(getattr(n, "ctx", None), ast.Load):
            name = dotted(n)
            if name in called:
                add(dotted(n.value))  # the object a method is called on
            else:
                add(name)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            add(n.id)
    # a name whose attribute chain is also listed keeps only the longer chain
    return [s for s in seen if not any(o != s and o.startswith(s + ".") for o in seen)]


def write_nodes(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return []


def writes(stmt):
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    out = []
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(getattr(n, "ctx", None), ast.Store):
                name = dotted(n)
                if name and name not in out:
                    out.append(name)
    return out


def bound_inside(node):
    """Names bound inside `node` by comprehensions, lambdas and walrus: not values before it."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.comprehension):
            names.update(x.id for x in ast.walk(n.target) if isinstance(x, ast.Name))
        elif isinstance(n, ast.Lambda):
            a = n.args
            names.update(p.arg for p in getattr(a, "posonlyargs", []) + a.args + a.kwonlyargs)
            names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
        elif isinstance(n, ast.NamedExpr):
            names.add(n.target.id)
    return names


def expressions(source, nodes, ctx):
    """Source text of every name, attribute chain and call-free subscript in `nodes` with the
    given context (ast.Load or ast.Store), except what is called, imported modules, self/cls
    and names bound inside the statement itself."""
    out = []
    for node in nodes:
        called = set(id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call))
        local = bound_inside(node)
        for n in ast.walk(node):
            if not isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) or id(n) in called:
                continue
            if not isinstance(getattr(n, "ctx", None), ctx):
                continue
            root = n
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if not isinstance(root, ast.Name) or root.id in local or root.id in IMPORTED \
                    or n is root and root.id in ("self", "cls"):
                continue
            if isinstance(n, ast.Subscript) and any(isinstance(x, ast.Call) for x in ast.walk(n)):
                continue
            text = ast.get_source_segment(source, n)
            if text and text not in out:
                out.append(text)
    return out


def context_span(tree, line, total):
    """The lines a code model is shown: the enclosing function (at most 200 lines around the
    target) or 30 lines either side at module level."""
    fn = enclosing_function(tree, line)
    start, end = (fn.lineno, fn.end_lineno) if fn else (line - 30, line + 30)
    start, end = max(start, line - 100, 1), min(end, line + 100, total)
    return {"start": start, "end": end}


def import_line(tree, source_lines):
    """1-based line before which the probe import goes: after the docstring and __future__ imports."""
    line = 1
    for i, stmt in enumerate(tree.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(getattr(stmt, "value", None), ast.Constant) \
                and isinstance(stmt.value.value, str):
            line = stmt.end_lineno + 1
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            line = stmt.end_lineno + 1
        else:
            break
    return line


def indent_of(lines, line):
    text = lines[line - 1]
    return text[:len(text) - len(text.lstrip())]


def header_end(stmt):
    """Last line of a compound statement's header (before its body)."""
    body = getattr(stmt, "body", None)
    if body:
        return body[0].lineno - 1
    return stmt.end_lineno


def analyse_line(tree, lines, line, source):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno - node.lineno) <= (best.end_lineno - best.lineno):
                best = node
    if best is None:
        return {"error": "line %d is not inside a statement" % line}
    compound = hasattr(best, "body") and isinstance(best.body, list)
    if compound and not (best.lineno <= line <= header_end(best)):
        return {"error": "line %d is inside %s but not a statement of its own" % (line, type(best).__name__)}
    if isinstance(best, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {"error": "line %d is a definition; target the function instead" % line}
    header_only = compound
    probe_nodes = []
    if isinstance(best, (ast.If, ast.While)):
        probe_nodes = [best.test]
    elif isinstance(best, (ast.For, ast.AsyncFor)):
        probe_nodes = [best.iter]
    elif isinstance(best, (ast.With, ast.AsyncWith)):
        probe_nodes = [i.context_expr for i in best.items]
    elif isinstance(best, ast.Return):
        probe_nodes = [best.value] if best.value is not None else []
    elif isinstance(best, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        probe_nodes = [best.value] if best.value is not None else []
        if isinstance(best, ast.AugAssign):
            probe_nodes.append(best.target)
    else:
        probe_nodes = [best]
    inputs = []
    for n in probe_nodes:
        for name in reads(n):
            if name not in inputs:
                inputs.append(name)
    result = {
        "kind": "statement",
        "statement": type(best).__name__,
        "line": best.lineno,
        "end_line": header_end(best) if header_only else best.end_lineno,
        "indent": indent_of(lines, best.lineno),
        "inputs": inputs,
        "outputs": [] if compound and not isinstance(best, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)) else writes(best),
        "compound": compound,
        "code": lines[best.lineno - 1].strip(),
        "candidates": {"reads": expressions(source, probe_nodes, ast.Load) +
                       ([ast.get_source_segment(source, best.target)] if isinstance(best, ast.AugAssign) else []),
                       "writes": expressions(source, write_nodes(best), ast.Store)},
        "context": context_span(tree, best.lineno, len(lines)),
    }
    if isinstance(best, ast.Return) and best.value is not None:
        v = best.value
        result["return_value"] = {"line": v.lineno, "col": v.col_offset, "end_line": v.end_lineno,
                                  "end_col": v.end_col_offset}
    if compound:
        result["body_indent"] = indent_of(lines, best.body[0].lineno)
        result["body_line"] = best.body[0].lineno
    return result


def find_function(tree, qualified):
    parts = qualified.split(".")
    scopes = [tree]
    found = None
    for i, part in enumerate(parts):
        nxt = []
        for scope in scopes:
            for node in ast.iter_child_nodes(scope):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part:
                    nxt.append(node)
        scopes = nxt
    for node in scopes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = node
            break
    return found


def enclosing_function(tree, line):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def analyse_function(tree, lines, qualified, source, fn=None):
    fn = fn or find_function(tree, qualified)
    if fn is None:
        return {"error": "no function %s" % qualified}
    qualified = qualified or fn.name
    a = fn.args
    params = [p.arg for p in getattr(a, "posonlyargs", []) + a.args + a.kwonlyargs]
    if a.vararg:
        params.append(a.vararg.arg)
    if a.kwarg:
        params.append(a.kwarg.arg)
    params = [p for p in params if p not in ("self", "cls")]
    body = fn.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
            and isinstance(first.value.value, str) and len(body) > 1:
        first = body[1]
    returns = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            # only returns of this function, not of nested ones
            owner = None
            for f in ast.walk(fn):
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and f is not fn:
                    if any(n is node for n in ast.walk(f)):
                        owner = f
            if owner is None:
                v = node.value
                returns.append({"line": v.lineno, "col": v.col_offset, "end_line": v.end_lineno,
                                "end_col": v.end_col_offset, "code": lines[node.lineno - 1].strip(),
                                "expr": ast.get_source_segment(source, v)})
    return {"kind": "function", "function": qualified, "line": fn.lineno, "end_line": fn.end_lineno,
            "params": params, "body_line": first.lineno, "body_indent": indent_of(lines, first.lineno),
            "returns": returns, "context": {"start": fn.lineno, "end": min(fn.end_lineno, fn.lineno + 300)}}


def main():
    request = json.load(sys.stdin)
    with open(request["file"], "rb") as f:
        data = f.read()
    source = data.decode("utf-8")
    lines = source.splitlines()
    try:
        tree = ast.parse(source, filename=request["file"])
    except SyntaxError as e:
        print(json.dumps({"error": "syntax error: %s (line %s)" % (e.msg, e.lineno)}))
        return
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Import):
            IMPORTED.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, ast.ImportFrom):
            IMPORTED.update(a.asname or a.name for a in stmt.names)
    if request.get("enclosing_function"):
        fn = enclosing_function(tree, int(request["line"]))
        result = analyse_function(tree, lines, None, source, fn) if fn else \
            {"error": "line %s is not inside a function" % request["line"]}
    elif "function" in request:
        result = analyse_function(tree, lines, request["function"], source)
    else:
        result = analyse_line(tree, lines, int(request["line"]), source)
    result["import_line"] = import_line(tree, lines)
    result["python"] = sys.version.split()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
