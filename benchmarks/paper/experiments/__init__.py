"""The paper's experiments, one module per table; ``runner`` runs them and ``common`` holds what they share."""
