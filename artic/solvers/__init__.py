"""Iterative solvers: PGS and TGS schedules over constraint rows, and the Gauss-Seidel sweep they share."""
