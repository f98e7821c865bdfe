"""A 784-120-84-10 perceptron whose activations are the device relu, trained with SGD on a
synthetic, MNIST-shaped data set (no download):
    neuronop python build.py && neuronop python model.py [--steps N] [--torch-relu]
--torch-relu trains the same model, from the same start, with torch.relu instead, for a
comparison: the losses are the same at every step."""
import argparse
import time

import torch
import torch.nn as nn

import my_ops


class MLP(nn.Module):
    def __init__(self, sizes=(28 * 28, 120, 84, 10), relu=my_ops.Relu.apply):
        super().__init__()
        self.fc1 = nn.Linear(sizes[0], sizes[1])
        self.fc2 = nn.Linear(sizes[1], sizes[2])
        self.fc3 = nn.Linear(sizes[2], sizes[3])
        self.relu = relu

    def forward(self, x):
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return torch.log_softmax(self.fc3(x), dim=1)


def synthetic_batches(steps, batch=32, seed=0):
    """Random 28x28 'images' whose label is decided by a fixed random projection, so the
    model has something to learn."""
    g = torch.Generator().manual_seed(seed)
    projection = torch.randn(28 * 28, 10, generator=g)
    for _ in range(steps):
        x = torch.rand(batch, 28 * 28, generator=g)
        yield x, (x @ projection).argmax(dim=1)


def train(steps, relu=my_ops.Relu.apply, seed=0):
    """Trains from a fixed start; returns the loss of every step and the seconds taken."""
    torch.manual_seed(seed)
    model = MLP(relu=relu)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    start = time.perf_counter()
    for x, y in synthetic_batches(steps, seed=seed):
        opt.zero_grad()
        loss = nn.functional.nll_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--torch-relu", action="store_true")
    args = parser.parse_args()
    relu = torch.relu if args.torch_relu else my_ops.Relu.apply
    print("----------Training ---------------")
    losses, seconds = train(args.steps, relu)
    print("Train throughput (iter/sec): %.2f" % (args.steps / seconds))
    print("Final loss is %.4f" % losses[-1])
    print("----------End Training ---------------")


if __name__ == "__main__":
    main()
