"""The Python peer for bench/msprobe: reads two msprobe dump.json files the way msprobe
compare loads them (json.load of the whole file, then msprobe's flattening rule into one
row per leaf), matches rows by name and finds the first API whose output statistics
differ. Prints one JSON line with what it found; the bench measures its time and RSS.
With --load-only: json.load of the two files and nothing else."""
import json
import sys


def leaf_rows(data, name, state, out, params_grad=False):
    if data is None:
        out.append((name, state, None))
        return
    if isinstance(data, list):
        for i, item in enumerate(data):
            leaf_rows(item, name if params_grad else f"{name}.{i}", state, out, params_grad)
        return
    if isinstance(data, dict):
        if isinstance(data.get("type"), str):
            out.append((name, state, (data.get("dtype"), str(data.get("shape")), data.get("Max"), data.get("Min"),
                                      data.get("Mean"), data.get("Norm"), data.get("md5"), data.get("value"))))
            return
        for key, value in data.items():
            leaf_rows(value, f"{name}.{key}", state, out, params_grad)


def read(path):
    with open(path) as f:
        dump = json.load(f)
    rows = []
    for entry, body in dump["data"].items():
        parts = entry.split(".")
        if parts[-1] == "parameters_grad" or (len(parts) > 1 and parts[-2] == "parameters_grad"):
            leaf_rows(body, entry, "parameters_grad", rows, params_grad=True)
            continue
        for key, suffix in (("input_args", ".input"), ("input_kwargs", ".input"), ("input", ".input"),
                            ("parameters", ".parameters"), ("output", ".output")):
            if key in body:
                leaf_rows(body[key], entry + suffix, "output" if key == "output" else "input", rows)
    return rows


def main():
    if sys.argv[1] == "--load-only":  # json.load of the two files, nothing else: the bar's yardstick
        sizes = []
        for path in sys.argv[2:4]:
            with open(path) as f:
                sizes.append(len(json.load(f)["data"]))
        print(json.dumps({"entries": sizes}))
        return
    baseline, candidate = sys.argv[1], sys.argv[2]
    bench = {name: values for name, _, values in read(baseline)}
    first = None
    rows = read(candidate)
    for name, state, values in rows:
        if state not in ("output", "parameters_grad") and (values is None or values[0] is not None):
            continue
        if bench.get(name) != values:
            first = name
            break
    print(json.dumps({"rows": len(rows), "first": first}))


if __name__ == "__main__":
    main()
