"""The module-level compiled graph that ``langgraph.json`` points LangGraph Studio at."""

from agent_graph.builder import build_graph

graph = build_graph()
