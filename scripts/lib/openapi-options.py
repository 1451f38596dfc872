"""Rewrites openapi.yaml's plugin option schemas from their declarations.

Usage: openapi-options.py TEST_OUTPUT OPENAPI_YAML

TEST_OUTPUT is what `swift test --filter OptionSchemaDocumentTests` printed:
for every schema the document does not publish as declared, the test prints
"openapi.yaml's <Name> differs from the declaration; the declaration as
JSON:" and the declaration, indented. Each such `components.schemas.<Name>`
section of the document is replaced by that JSON written as YAML in the
document's own style (keys in a fixed order, small objects on one line, the
properties in the order the section had them). Nothing else is touched.
"""
import json
import re
import sys

KEY_ORDER = ["$ref", "type", "const", "additionalProperties", "required", "description", "minimum", "maximum",
             "minLength", "maxLength", "pattern", "format", "enum", "default", "writeOnly", "x-operator-only",
             "minItems", "maxItems", "uniqueItems", "items", "oneOf", "properties"]
YAML_WORDS = {"null", "true", "false", "yes", "no", "on", "off"}


def declarations(test_output):
    """{schema name: declared JSON} from the test's failure messages."""
    lines, found, i = test_output.split("\n"), {}, 0
    while i < len(lines):
        match = re.search(r"openapi.yaml's (\w+) differs", lines[i])
        i += 1
        if not match:
            continue
        body = []
        while i < len(lines) and lines[i].startswith("  "):
            body.append(lines[i][2:])
            i += 1
        found[match.group(1)] = json.loads("\n".join(body))
    return found


def ordered(keys):
    return sorted(keys, key=lambda k: (KEY_ORDER.index(k) if k in KEY_ORDER else len(KEY_ORDER), k))


def scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(int(value)) if float(value).is_integer() else str(value)
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9 ._/-]*", value) and value not in YAML_WORDS:
        return value
    return "'" + value.replace("'", "''") + "'"


def is_flat(value):
    """True when a value reads well on one line: no object inside it but a flat list's items."""
    if isinstance(value, list):
        return all(not isinstance(x, (dict, list)) for x in value)
    if not isinstance(value, dict):
        return True
    if all(not isinstance(x, dict) and is_flat(x) for x in value.values()):
        return True
    items = value.get("items")
    return (set(value) <= {"type", "items", "maxItems", "minItems", "description", "uniqueItems", "default"}
            and isinstance(items, dict) and is_flat(items) and not isinstance(items.get("items"), dict))


def inline(value):
    if isinstance(value, dict):
        keys = sorted(ordered(value), key=lambda k: k == "description")
        return "{ " + ", ".join(f"{k}: {inline(value[k])}" for k in keys) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(inline(x) for x in value) + "]"
    return scalar(value)


def write(value, indent, old_section, lines):
    pad = " " * indent
    # Within one kind of several, its members keep their order from that kind's own block.
    kind = value.get("properties", {}).get("type", {}).get("const") if isinstance(value.get("properties"), dict) else None
    anchor = old_section.find(f"const: {kind}") if kind else -1
    anchor = max(old_section.rfind("\n", 0, anchor), 0) if anchor >= 0 else 0

    def position(name):
        found = re.compile(r"\n\s+" + re.escape(name) + r":").search(old_section, anchor)
        return found.start() if found else 10**9

    for key in ordered(value):
        member = value[key]
        if key == "properties":
            lines.append(f"{pad}properties:")
            for name in sorted(member, key=lambda n: (position(n), n)):
                if is_flat(member[name]):
                    lines.append(f"{pad}  {name}: {inline(member[name])}")
                else:
                    lines.append(f"{pad}  {name}:")
                    write(member[name], indent + 4, old_section, lines)
        elif key == "oneOf":
            lines.append(f"{pad}oneOf:")
            for alternative in member:
                written = []
                write(alternative, indent + 4, old_section, written)
                written[0] = pad + "  - " + written[0].lstrip()
                lines.extend(written)
        elif isinstance(member, dict) and not is_flat(member):
            lines.append(f"{pad}{key}:")
            write(member, indent + 2, old_section, lines)
        else:
            lines.append(f"{pad}{key}: {inline(member)}")


def main(test_output_path, document_path):
    found = declarations(open(test_output_path).read())
    document = open(document_path).read()
    for name, schema in found.items():
        section = re.search(r"\n    " + name + r":\n(.*?)(?=\n\n    \w|\Z)", document, re.S)
        lines = [f"    {name}:"]
        if section:
            write(schema, 6, section.group(1), lines)
            document = document[:section.start()] + "\n" + "\n".join(lines) + document[section.end():]
        else:
            # A new schema goes at the end of components.schemas' first block it can follow.
            write(schema, 6, "", lines)
            anchor = re.search(r"\n  schemas:\n", document)
            document = document[:anchor.end()] + "\n".join(lines) + "\n\n" + document[anchor.end():]
    open(document_path, "w").write(document)
    print("rewrote: " + (", ".join(found) if found else "nothing, the document already matches"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
