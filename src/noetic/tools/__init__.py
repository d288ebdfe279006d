"""Tools an engine may offer a model: typed functions with a JSON schema of their arguments.

Below the engines and beside the runtime: CASCADE's investigation, the cognitive agent and Nova
all use the same tool model, the same validation and the same discovery (``noetic.tools``
entry points, tools of configured MCP servers).
"""
