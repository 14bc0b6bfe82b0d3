"""`triton-sre bot`: Alertmanager webhook -> durable outbox -> one Slack message per alert group."""
