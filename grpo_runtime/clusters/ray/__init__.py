"""A run as one Ray job: where it goes on the cluster (placement), the job's record and submission (jobs), the
driver that starts every accelerate machine in one placement group (driver), the cluster backend (backend) that
`grpo launch --ray` (its options: cli), `grpo ray status|logs|wait|cancel|resume` and the service's Ray runs drive.
Ray itself is imported only when a cluster is asked, so the service and the schema install never need it."""
