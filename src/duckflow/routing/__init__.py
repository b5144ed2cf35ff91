"""Routing engine: rule router, LLM classifier router and router chains (seeds 003, 004).

    chain = RouterChain([CommandRouter({"code": "CODE"}), RuleRouter([...]), LLMRouter(model, routes)],
                        fallback_route="CHAT")
    decision = await chain.route("please fix the failing test")
"""

from duckflow.routing.chain import RouterChain
from duckflow.routing.classifier import Classification, LLMRouter
from duckflow.routing.commands import CommandRouter
from duckflow.routing.route import Route, RouteDecision, Router
from duckflow.routing.rules import Rule, RuleRouter

__all__ = ["Classification", "CommandRouter", "LLMRouter", "Route", "RouteDecision", "Router",
           "RouterChain", "Rule", "RuleRouter"]
