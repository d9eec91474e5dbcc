"""A run as one Ray job: where it goes on the cluster (placement), the job's driver that starts every accelerate
machine in one placement group (driver), and `grpo launch --ray` / `grpo ray status|logs|wait|cancel|resume` (cli).
Ray itself is imported only when a cluster is asked, so the service and the schema install never need it."""
