"""Scores of a trained model on its test windows: the metrics the Fault lab reports and the per-window
predictions a re-analysis needs. Used by core.lab.training (which re-exports both functions).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn import metrics as skm


def classification_metrics(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> dict[str, Any]:
    """Accuracy, macro precision / recall / F1, per-class F1 and the confusion matrix (rows true, columns
    predicted), all from sklearn.metrics over the labels 0 .. n_classes-1 (a class never predicted scores 0)."""
    labels = list(range(n_classes))
    precision, recall, f1, _ = skm.precision_recall_fscore_support(
        y_true, y_pred, labels=labels, average="macro", zero_division=0
    )
    return {
        "accuracy": float(skm.accuracy_score(y_true, y_pred)),
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
        "per_class_f1": skm.f1_score(y_true, y_pred, labels=labels, average=None, zero_division=0).tolist(),
        "confusion_matrix": skm.confusion_matrix(y_true, y_pred, labels=labels).tolist(),
    }


def per_window_scores(y_true: np.ndarray, probabilities: np.ndarray) -> dict[str, Any]:
    """Balanced accuracy (mean recall over the classes present), log loss, and the per-window predictions:
    predicted class and the probability given to the true class (4 decimals), in test-window order."""
    predicted = probabilities.argmax(axis=1)
    p_true = probabilities[np.arange(len(y_true)), y_true]
    present = np.unique(y_true)
    recalls = [float(np.mean(predicted[y_true == label] == label)) for label in present]
    return {
        "balanced_accuracy": float(np.mean(recalls)),
        "log_loss": float(np.mean(-np.log(np.clip(p_true, 1e-7, 1.0)))),
        "predictions": {
            "true": [int(v) for v in y_true],
            "predicted": [int(v) for v in predicted],
            "p_true": [round(float(v), 4) for v in p_true],
        },
    }
