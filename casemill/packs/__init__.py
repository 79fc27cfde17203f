"""Operators a domain pack brings beside the ones every contract gets (`casemill.generators`).

A pack's own operators know its state and policy in detail; they are declared under the
`casemill.operators` entry points like any plugin's. The built-in support pack's are in
`casemill.packs.support`; its domain, policy and contract are in `casemill.domains.support`.
"""
