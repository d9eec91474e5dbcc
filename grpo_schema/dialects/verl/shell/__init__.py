"""A reader of the shell scripts verl runs are launched from: words with their positions, variables resolved.

Read in order: `words.py` splits the text into commands of words as written (quoting, here-documents),
`expansion.py` expands a word with what the script has assigned so far, `script.py` walks the commands,
following assignments and commands kept in variables. It runs nothing.
"""

from grpo_schema.dialects.verl.shell.script import Command, Script, read_script
from grpo_schema.dialects.verl.shell.words import Part, ShellProblem, Word

__all__ = ["Command", "Part", "Script", "ShellProblem", "Word", "read_script"]
