"""verl's dialect: its launch scripts and YAML read with positions, judged by verl's own checks and the ones verl
runs only on the cluster, explained in verl's units and converted to and from TRL's."""
