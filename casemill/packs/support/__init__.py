"""The support pack's own operators: swaps of products, amounts, addresses and customers;
flips of order facts; adversarial templates on orders; faults on order lookups and writes; blends
of support intents; LLM rewrites. They read the support state and policy directly (`facts.py`),
where the contract operators (`casemill.generators.contract`) read only the contract.
"""
