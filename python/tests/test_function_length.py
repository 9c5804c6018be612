"""No function in python/roastop is over 50 lines (its def to its last
line, nested functions counted in the function that holds them), as in the C."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "roastop"
MAX_LINES = 50


def test_no_function_over_50_lines():
    long = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.name}:{node.lineno} {node.name}: {lines} lines")
    assert not long, long
