"""A small GPT trainer with torchtitan's command line, log lines and checkpoint layout."""
