"""msprobe-format data dump for the toy trainer (see dumper.py)."""
from toy_trainer.dump.dumper import Dumper

__all__ = ["Dumper"]
