"""The Q&A pipeline: retrieval, clients, verifier, repair, rendering (seed map 000)."""
