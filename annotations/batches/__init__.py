"""Batches: the one request that creates a batch (``request.BatchRequest``) and its rules.

The services that plan and write a batch are ``annotations.services.batch_plan`` and
``batch_create``; the assignment policies are ``annotations.policies``.
"""
