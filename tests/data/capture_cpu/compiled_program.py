"""A torch.compile program (default mode) for `capture --arch` with no GPU: Linear + LayerNorm + softmax."""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)
        self.norm = torch.nn.LayerNorm(64)

    def forward(self, x):
        return torch.softmax(self.norm(self.lin(x)), dim=-1)


model = Block().cuda()
compiled = torch.compile(model)
y = compiled(torch.randn(32, 64, device="cuda"))
print(f"program: out {tuple(y.shape)} on {y.device}")
