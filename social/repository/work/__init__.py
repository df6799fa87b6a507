"""The worker tier's durable queues."""
