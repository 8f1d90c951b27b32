"""Clients for the network services swemine talks to (LLM endpoints, GitHub), with timeouts, retries and caches."""
