"""The core driven by a workload alone, and the models of TFS and Karuna."""
