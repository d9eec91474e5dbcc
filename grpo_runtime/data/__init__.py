"""What a prompt and a reward are: datasets and mixtures, reward functions and the shipped reward library, and
open-r1's script arguments and rewards."""
